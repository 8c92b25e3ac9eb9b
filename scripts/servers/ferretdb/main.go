// Command ferretdb runs FerretDB v1 (MongoDB wire protocol over SQLite) through its embeddable
// package. We do not build upstream's cmd/ferretdb: outside its own repository it panics on a
// missing build/version/version.txt. The embeddable server also opens no debug port and has
// telemetry off, so the only port it binds is the one given here.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	sqliteURL := flag.String("sqlite-url", "file:data/", "SQLite URI (a directory, ending in /)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
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

	logger.Info("listening", "uri", f.MongoDBURI())
	if err := f.Run(ctx); err != nil {
		logger.Error("stopped", "error", err)
		os.Exit(1)
	}
}
