package main

import (
	"runtime"
	"sync/atomic"
)

var sink atomic.Uint64

// yieldEvery lets each loop give up its thread about every 0.3 ms, as a server's code
// does at its calls and I/O: a loop that ran for tens of milliseconds would be stopped
// by the scheduler's asynchronous preemption instead (runtime sysmon, 10 ms), whose
// signal handler, runtime.asyncPreempt, would take a share of the samples.
const yieldEvery = 1<<18 - 1

//go:noinline
func createPost(a *App) uint64 {
	x := uint64(9)
	for i := 0; i < 300_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x + a.CreatePost("hello")
}

//go:noinline
func (a *App) CreatePost(message string) uint64 {
	x := uint64(10)
	for i := 0; i < 500_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x + sanitizeMessage(message) + a.preparePostForClient()
}

// sanitizeMessage stands for a hot function on a frequent path; the knowncause build
// spends sanitizeRounds' larger value here.
//
//go:noinline
func sanitizeMessage(message string) uint64 {
	x := uint64(len(message))
	for i := 0; i < sanitizeRounds; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x
}

//go:noinline
func (a *App) preparePostForClient() uint64 {
	x := uint64(11)
	for i := 0; i < 600_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x
}
