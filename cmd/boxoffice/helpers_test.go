package main

import "github.com/boxoffice/boxoffice/provision"

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
