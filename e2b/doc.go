// Package e2b serves an E2B-compatible API over Bullpen's sandboxes, so
// that the official E2B SDKs (E2B_API_URL and E2B_SANDBOX_URL pointed at a
// Bullpen server) drive Bullpen sandboxes unchanged.
//
// Two handlers make it up:
//
//   - the control plane (API): create from a template, get, list, kill,
//     set timeout, pause, resume/connect and metrics, authenticated by an
//     E2B-shaped API key (X-API-KEY: e2b_…) that maps to a Bullpen token;
//   - the sandbox side (Sandbox): what E2B's in-sandbox daemon, envd,
//     serves — the process.Process and filesystem.Filesystem services over
//     Connect RPC (connectrpc.com/connect, JSON codec), the HTTP file
//     upload and download and /health — plus published ports, chosen per
//     request by the E2b-Sandbox-Id and E2b-Sandbox-Port headers of the
//     SDKs' sandbox-URL mode.
//
// Everything goes through the same sandbox service as the native API, as
// the key's member: limits, network policy, ownership, events and the exec
// history apply unchanged, and an E2B sandbox is an ordinary Bullpen
// sandbox. The package is plain net/http; package web mounts it.
package e2b
