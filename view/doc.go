// Package view holds what the REST API and the dashboard show that is not
// a domain noun: one turn as the inspector shows it (TurnDetail), a hire's
// result with its token shown once (Hired), a token with its owner
// (TokenView), the Telegram bridge's status and its admin lists. The
// services build them from the root package's nouns; web, mcp and the Go
// client show them. It imports only the root package, so every layer can.
package view
