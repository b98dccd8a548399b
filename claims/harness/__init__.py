"""The claims' harness: how a check records, judges and identifies what it measured, the run store, the plugin."""
