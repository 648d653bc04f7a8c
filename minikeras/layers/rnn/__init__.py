"""rnn layers."""
