"""Running the user's file and recording every kernel launch its own code makes."""
