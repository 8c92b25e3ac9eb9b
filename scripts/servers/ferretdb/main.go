// Command ferretdb runs FerretDB v1 (MongoDB wire protocol over SQLite) through its embeddable
// package. We do not build upstream's cmd/ferretdb: outside its own repository it panics on a
// missing build/version/version.txt. The embeddable server also opens no debug port and has
// telemetry off. FerretDB itself listens on a unix socket in the data directory; the TCP
// address given here is served by the front door in serialize.go, which makes each write
// command atomic (see there), so the only port bound is the one given here.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served only when FERRETDB_PPROF_ADDR is set
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	sqliteURL := flag.String("sqlite-url", "file:data/", "SQLite URI (a directory, ending in /)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	// FerretDB decodes every document it reads into short-lived Go values. At Go's default (100)
	// the collector took about 40% of its CPU under a catalog's pages at 32 connections; at 400 it
	// runs a quarter as often: 25 ms of CPU per page of 50 products instead of 41, for a heap
	// allowed to grow to five times what is live (tens of MB). GOGC, when set, decides instead.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	socket, err := socketPath(*sqliteURL)
	if err != nil {
		logger.Error("cannot start", "error", err)
		os.Exit(1)
	}
	_ = os.Remove(socket)
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{Unix: socket},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: *sqliteURL,
	})
	if err != nil {
		logger.Error("cannot start", "error", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Error("cannot listen", "error", err)
		os.Exit(1)
	}
	go front(ln, socket, logger)
	go func() {
		<-ctx.Done()
		ln.Close()
	}()

	// An operator (or a benchmark) profiles this process with go tool pprof when asked to.
	if addr := os.Getenv("FERRETDB_PPROF_ADDR"); addr != "" {
		go func() { logger.Warn("pprof stopped", "error", http.ListenAndServe(addr, nil)) }()
	}

	logger.Info("listening", "address", ln.Addr().String(), "ferretdb", f.MongoDBURI())
	if err := f.Run(ctx); err != nil {
		logger.Error("stopped", "error", err)
		os.Exit(1)
	}
}

// socketPath puts FerretDB's unix socket in the SQLite directory (file:<dir>/).
func socketPath(sqliteURL string) (string, error) {
	dir := strings.TrimPrefix(strings.SplitN(sqliteURL, "?", 2)[0], "file:")
	if dir == "" {
		return "", fmt.Errorf("cannot take a directory from --sqlite-url %q", sqliteURL)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	// unix socket paths are limited to about 100 bytes: fall back to the temp directory
	path := filepath.Join(abs, "ferretdb.sock")
	if len(path) > 100 {
		path = filepath.Join(os.TempDir(), fmt.Sprintf("ferretdb-%d.sock", os.Getpid()))
	}
	return path, nil
}
