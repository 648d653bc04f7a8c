"""mk.utils.Progbar: Keras's averaging of values, stateful metrics, verbose 1 and 2."""
import minikeras as mk


def test_averages_weighted_by_steps_and_stateful_values(capsys):
    bar = mk.utils.Progbar(10, verbose=2, stateful_metrics=["acc"])
    bar.update(2, values=[("loss", 1.0), ("acc", 0.5)])
    bar.add(2, values=[("loss", 4.0), ("acc", 0.75)])
    assert bar.averages() == {"loss": 2.5, "acc": 0.75}  # (1*2 + 4*2) / 4, and acc as given
    assert capsys.readouterr().out == ""
    bar.update(10, values=[("loss", 0.0)])  # 6 more steps of 0: (10) / 10
    assert bar.averages()["loss"] == 1.0
    out = capsys.readouterr().out
    assert out.startswith("10/10 - ") and "loss: 1.0000 - acc: 0.7500" in out


def test_verbose_1_draws_a_bar(capsys):
    bar = mk.utils.Progbar(3, unit_name="sample")
    for i in range(3):
        bar.update(i + 1, values=[("loss", float(i))])
    out = capsys.readouterr().out
    assert "3/3" in out and "sample" in out and "loss=1.0000" in out
    quiet = mk.utils.Progbar(None, verbose=0)
    quiet.add(5)
    assert capsys.readouterr().out == ""
