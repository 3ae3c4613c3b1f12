"""What every feature's control shares: the one-job slot, the message line, the model."""
