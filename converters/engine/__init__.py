"""The conversion engine: the only code that knows about worker processes (chunks, the pool,
rows checked and written on two cores, loss recording and replay, counting in chunks)."""
