"""The test shop's seed: ``manage.py seed_shop`` (what every replay test starts from)."""
