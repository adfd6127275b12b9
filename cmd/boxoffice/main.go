// Command boxoffice runs and administers the Boxoffice ticketing API
// gateway: serve, migrate, seed demo data, import the catalog and provision
// accounts, apps and keys. The commands are package boxcli, the program
// they run is package server; docs/operator.md is the contract of their
// names.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // event timezones resolve on machines without a zoneinfo database

	"github.com/boxoffice/boxoffice/boxcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := boxcli.Run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
