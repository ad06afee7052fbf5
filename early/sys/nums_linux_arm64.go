package sys

// System call numbers (linux/arm64, the generic table).
const (
	sysRead         = 63
	sysWrite        = 64
	sysClose        = 57
	sysIoctl        = 29
	sysSocket       = 198
	sysConnect      = 203
	sysGetsockopt   = 209
	sysClockGettime = 113
	sysExitGroup    = 94
	sysOpenat       = 56
	sysPpoll        = 73
)

// For RaiseSIGPIPE.
const (
	sysRtSigaction = 134
	sysGetpid      = 172
	sysGettid      = 178
	sysTgkill      = 131
)
