"""The command-line layer: parses arguments, prints, maps errors to exit codes. No business rules here."""
