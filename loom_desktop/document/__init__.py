"""One open document as a tab: view, live controller, context HTML, step-list model."""
