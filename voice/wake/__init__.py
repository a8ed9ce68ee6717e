"""Wake words: small models that hear one phrase on every mic block, so a sleeping assistant wakes for it."""
