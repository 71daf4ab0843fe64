package main

import (
	"net/http"
	"runtime"
	"strings"
)

// App stands for Mattermost's app layer (server/channels/app): the API handlers call it.
type App struct{}

// newAPI routes POST /api/v4/handlers/<name> to the handler named as Mattermost's api4
// names it (the handler label of mattermost_api_time), so a caller can have the process
// spend a request's CPU the way that handler would.
func newAPI() http.Handler {
	a := &App{}
	handlers := map[string]func(*App) uint64{
		"createPost":         createPost,
		"getPostsForChannel": getPostsForChannel,
		"getPostThread":      getPostThread,
		"viewChannel":        viewChannel,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/api/v4/handlers/")
		if !ok || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		h, known := handlers[name]
		if !known {
			h = otherHandler
		}
		sink.Add(h(a))
		w.WriteHeader(http.StatusNoContent)
	})
}

// Each function below spends its own CPU (a dependent chain of multiply-adds the compiler
// cannot drop) before calling the next, so a profile gives each its own self time.

//go:noinline
func getPostsForChannel(a *App) uint64 {
	x := uint64(1)
	for i := 0; i < 300_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x + a.GetPostsPage()
}

//go:noinline
func getPostThread(a *App) uint64 {
	x := uint64(2)
	for i := 0; i < 300_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x + a.GetPostThread()
}

//go:noinline
func viewChannel(a *App) uint64 {
	x := uint64(3)
	for i := 0; i < 200_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x + a.ViewChannel()
}

//go:noinline
func otherHandler(_ *App) uint64 {
	x := uint64(4)
	for i := 0; i < 400_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x
}

//go:noinline
func (a *App) GetPostsPage() uint64 {
	x := uint64(5)
	for i := 0; i < 1_200_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x + a.preparePostListForClient()
}

//go:noinline
func (a *App) GetPostThread() uint64 {
	x := uint64(6)
	for i := 0; i < 600_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x + a.preparePostListForClient()
}

//go:noinline
func (a *App) ViewChannel() uint64 {
	x := uint64(7)
	for i := 0; i < 400_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x
}

//go:noinline
func (a *App) preparePostListForClient() uint64 {
	x := uint64(8)
	for i := 0; i < 700_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i&yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	return x
}
