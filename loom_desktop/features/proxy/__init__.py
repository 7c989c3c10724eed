"""Proxies and approvals: start, attach, follow, the approvals panel, the offline demo."""
