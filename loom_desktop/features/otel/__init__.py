"""File ▸ Listen for OpenTelemetry…: a local OTLP receiver whose traces open as live tabs."""
