package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/boxoffice/boxoffice/boxcli"
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/server"
	"github.com/stretchr/testify/require"
)

// The end-to-end tests build the program with package server's names,
// unqualified as they were when the wiring lived in this package.
type (
	Config = server.Config
	Main   = server.Main
)

var (
	New           = server.New
	Open          = server.Open
	DefaultConfig = server.DefaultConfig
)

func provisionAccount(email string) provision.AccountInput {
	return provision.AccountInput{Name: "Test Partner", Email: email}
}

func provisionApp(accountID int64) provision.AppInput {
	return provision.AppInput{AccountID: accountID, Name: "Test app", RedirectDomains: []string{"shop.example.com"}}
}

func provisionClearDomains() provision.AppUpdate {
	return provision.AppUpdate{ClearRedirectDomains: true}
}

func provisionDomains(d ...string) provision.AppUpdate {
	return provision.AppUpdate{RedirectDomains: d}
}

// runCLI runs the boxoffice command against dbURL and returns stdout.
func runCLI(t *testing.T, dbURL string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := boxcli.New(&stdout, &stderr).Run(context.Background(), append([]string{"boxoffice", "--database-url", dbURL}, args...))
	return stdout.String(), err
}

// mustJSON runs a command that prints one JSON object and returns it.
func mustJSON(t *testing.T, dbURL string, args ...string) map[string]any {
	t.Helper()
	out, err := runCLI(t, dbURL, args...)
	require.NoError(t, err, "boxoffice %v", args)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), "stdout must be exactly one JSON object: %q", out)
	return v
}

// keys returns the keys of m, in no order.
func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

var (
	testKeyRE = regexp.MustCompile(`^svc_test_[a-z2-7]{32}$`)
	liveKeyRE = regexp.MustCompile(`^svc_live_[a-z2-7]{32}$`)
)
