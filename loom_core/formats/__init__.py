"""Every on-disk format: schema, fast structs, checksum, journals, wirelogs, load, save."""
