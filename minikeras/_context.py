"""Global recording state shared by the tape, the ops and ``mk.function``.

Kept in one tiny module so that the check an op makes when nothing records is a single
truthiness test of a list.
"""

tapes = []    # GradientTapes currently recording, innermost last
traces = []   # mk.function trace contexts currently tracing, innermost last
