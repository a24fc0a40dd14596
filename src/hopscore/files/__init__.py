"""Files: reading and writing with located errors, JSON text and streams, output claims,
reruns and shards."""
