"""Files: reading and writing with located errors, JSON text and streams, output claims,
reruns, shards and the bundled sample files."""
