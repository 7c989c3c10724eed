"""One folder per feature of the app, each holding its dialogs, panels, models and runners."""
