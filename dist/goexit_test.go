package dist

import "runtime"

func runtimeGoexit() { runtime.Goexit() }
