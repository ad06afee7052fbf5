package sys

// System call numbers (linux/amd64).
const (
	sysRead         = 0
	sysWrite        = 1
	sysClose        = 3
	sysIoctl        = 16
	sysSocket       = 41
	sysConnect      = 42
	sysGetsockopt   = 55
	sysClockGettime = 228
	sysExitGroup    = 231
	sysOpenat       = 257
	sysPpoll        = 271
)

// For RaiseSIGPIPE.
const (
	sysRtSigaction = 13
	sysGetpid      = 39
	sysGettid      = 186
	sysTgkill      = 234
)
