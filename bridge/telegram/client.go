package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// client is the bridge's view of the Bot API: go-telegram/bot for the
// calls it makes, plus getUpdates done here, because the library's poller
// confirms updates before they are handled and that would lose updates in
// a crash.
type client struct {
	bot   *bot.Bot
	http  *tracingClient
	base  string // Bot API base URL
	token string
}

// tracingClient records, per request, whether the request was written in
// full and which status answered it: what the outbox needs to tell "not
// sent" from "maybe sent".
type tracingClient struct{ inner *http.Client }

type callInfo struct {
	wrote  atomic.Bool
	status atomic.Int64
}

type callKey struct{}

func (t *tracingClient) Do(req *http.Request) (*http.Response, error) {
	info, _ := req.Context().Value(callKey{}).(*callInfo)
	if info != nil {
		trace := &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) {
			if w.Err == nil {
				info.wrote.Store(true)
			}
		}}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	}
	resp, err := t.inner.Do(req)
	if info != nil && resp != nil {
		info.status.Store(int64(resp.StatusCode))
	}
	return resp, err
}

func newClient(token, serverURL string, hc *http.Client) (*client, error) {
	if hc == nil {
		hc = &http.Client{}
	}
	tc := &tracingClient{inner: hc}
	opts := []bot.Option{bot.WithSkipGetMe(), bot.WithHTTPClient(time.Minute, tc),
		bot.WithErrorsHandler(func(error) {}), bot.WithDefaultHandler(func(context.Context, *bot.Bot, *models.Update) {})}
	if serverURL != "" {
		opts = append(opts, bot.WithServerURL(strings.TrimRight(serverURL, "/")))
	}
	b, err := bot.New(token, opts...)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	// The base URL the library uses: serverURL, or the library's default.
	base := strings.TrimSuffix(b.FileDownloadLink(&models.File{}), "/file/bot"+token+"/")
	return &client{bot: b, http: tc, base: base, token: token}, nil
}

// Outcome classes of a call.
type outcome int

const (
	outcomeOK           outcome = iota
	outcomeRetry                // not delivered: try again after a backoff
	outcomeRateLimited          // 429: try again after retry_after
	outcomeUnauthorized         // 401: the token is bad; stop until it changes
	outcomeRejected             // Telegram refused it for good (400, 403, 404)
	outcomeUncertain            // the request went out and no answer came back
)

// classify sorts a call's error. info says whether the request was
// written and answered.
func classify(err error, info *callInfo) (outcome, time.Duration) {
	var tooMany *bot.TooManyRequestsError
	switch {
	case err == nil:
		return outcomeOK, 0
	case errors.As(err, &tooMany):
		return outcomeRateLimited, time.Duration(max(tooMany.RetryAfter, 1)) * time.Second
	case errors.Is(err, bot.ErrorUnauthorized):
		return outcomeUnauthorized, 0
	case errors.Is(err, bot.ErrorBadRequest), errors.Is(err, bot.ErrorForbidden), errors.Is(err, bot.ErrorNotFound),
		bot.IsMigrateError(err):
		return outcomeRejected, 0
	case errors.Is(err, bot.ErrorConflict):
		return outcomeRetry, 0
	case info == nil, !info.wrote.Load():
		return outcomeRetry, 0 // never reached Telegram
	case info.status.Load() >= 500:
		return outcomeRetry, 0 // Telegram answered that it failed
	}
	return outcomeUncertain, 0
}

func withInfo(ctx context.Context) (context.Context, *callInfo) {
	info := &callInfo{}
	return context.WithValue(ctx, callKey{}, info), info
}

// getMe checks the token and returns the bot's username.
func (c *client) getMe(ctx context.Context) (string, error) {
	u, err := c.bot.GetMe(ctx)
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// apiError is an error answer of getUpdates.
type apiError struct {
	Code        int
	Description string
	RetryAfter  int
}

func (e *apiError) Error() string {
	return fmt.Sprintf("telegram: %d %s", e.Code, e.Description)
}

// getUpdates long-polls for updates from offset on. It does not use the
// library: the offset it sends is the one the bridge has committed.
func (c *client) getUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]models.Update, error) {
	body, _ := json.Marshal(map[string]any{"offset": offset, "timeout": int(timeout.Seconds()),
		"allowed_updates": []string{"message", "callback_query"}})
	ctx, cancel := context.WithTimeout(ctx, timeout+15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("telegram: getUpdates: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("telegram: getUpdates: %s", redact(err.Error(), c.token))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("telegram: getUpdates: %w", err)
	}
	var r struct {
		OK          bool            `json:"ok"`
		Result      []models.Update `json:"result"`
		ErrorCode   int             `json:"error_code"`
		Description string          `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("telegram: getUpdates: HTTP %d, not a Bot API answer", resp.StatusCode)
	}
	if !r.OK {
		return nil, &apiError{Code: r.ErrorCode, Description: r.Description, RetryAfter: r.Parameters.RetryAfter}
	}
	return r.Result, nil
}

// redact keeps the token out of error messages and logs.
func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "<token>")
}

// sendHTML sends one HTML message and returns its Telegram message ID.
func (c *client) sendHTML(ctx context.Context, chatID int64, html string, replyTo int64, markup *models.InlineKeyboardMarkup) (int64, *callInfo, error) {
	ctx, info := withInfo(ctx)
	p := &bot.SendMessageParams{ChatID: chatID, Text: html, ParseMode: models.ParseModeHTML,
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()}}
	if replyTo != 0 {
		p.ReplyParameters = &models.ReplyParameters{MessageID: int(replyTo), AllowSendingWithoutReply: true}
	}
	if markup != nil {
		p.ReplyMarkup = markup
	}
	m, err := c.bot.SendMessage(ctx, p)
	if err != nil {
		return 0, info, err
	}
	return int64(m.ID), info, nil
}

// editMarkup replaces the inline keyboard of a message the bot sent.
func (c *client) editMarkup(ctx context.Context, chatID, msgID int64, markup *models.InlineKeyboardMarkup) (*callInfo, error) {
	ctx, info := withInfo(ctx)
	p := &bot.EditMessageReplyMarkupParams{ChatID: chatID, MessageID: int(msgID)}
	if markup != nil {
		p.ReplyMarkup = markup
	}
	_, err := c.bot.EditMessageReplyMarkup(ctx, p)
	return info, err
}

// answerCallback answers a button press; the text shows as a toast.
func (c *client) answerCallback(ctx context.Context, id, text string) error {
	_, err := c.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text})
	return err
}

// setWebhook registers url with the secret token. One connection at a
// time keeps updates in order.
func (c *client) setWebhook(ctx context.Context, url, secret string) error {
	_, err := c.bot.SetWebhook(ctx, &bot.SetWebhookParams{URL: url, SecretToken: secret, MaxConnections: 1,
		AllowedUpdates: []string{"message", "callback_query"}})
	return err
}

// deleteWebhook removes any webhook so that getUpdates works; pending
// updates are kept.
func (c *client) deleteWebhook(ctx context.Context) error {
	_, err := c.bot.DeleteWebhook(ctx, &bot.DeleteWebhookParams{})
	return err
}
