"""The virtual GPU: with no GPU here, the user's file sees one device of the chosen target."""
