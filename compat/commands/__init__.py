"""One module per `compat` sub-command; each exposes register(app)."""
