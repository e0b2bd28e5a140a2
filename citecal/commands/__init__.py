"""One module per CLI command; each exports a click command registered in citecal.cli."""
