package main

import (
	"github.com/boxoffice/boxoffice/provision"
	"github.com/boxoffice/boxoffice/server"
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
