#include "textflag.h"

// func lkLocked(): the kernel's uprobe decoder refuses LOCK-prefixed instructions.
TEXT ·lkLocked(SB), NOSPLIT, $0-0
	LOCK
	INCQ ·counter(SB)
	RET
