package store

// BlockingOpen is the count of blocking connections open in the process (blockingconn_linux.go).
func BlockingOpen() int64 { return blockingOpen.Load() }
