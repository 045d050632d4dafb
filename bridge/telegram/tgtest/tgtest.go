// Package tgtest is a fake Telegram Bot API server for tests. It speaks
// the real HTTP protocol: POST (or GET) /bot<TOKEN>/<method> with
// multipart/form-data, application/x-www-form-urlencoded or JSON
// parameters, answers {"ok":true,"result":…} or {"ok":false,"error_code",
// "description","parameters"}, holds getUpdates until an update arrives or
// its timeout passes, confirms updates by offset, and checks what a bot
// sends: parse_mode HTML with only the tags Telegram allows, and the
// 4,096-character limit. Tests push user messages and button presses and
// read what the bot sent.
package tgtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// User is a Telegram user as the API shows it.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// Chat is a Telegram chat as the API shows it.
type Chat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"` // private, group, supergroup
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
}

// Message is a Telegram message as the API shows it.
type Message struct {
	MessageID      int64           `json:"message_id"`
	From           *User           `json:"from,omitempty"`
	Chat           Chat            `json:"chat"`
	Date           int64           `json:"date"`
	Text           string          `json:"text,omitempty"`
	Entities       []Entity        `json:"entities,omitempty"`
	ReplyToMessage *Message        `json:"reply_to_message,omitempty"`
	ReplyMarkup    json.RawMessage `json:"reply_markup,omitempty"`
}

// Entity marks a span of a message's text (here: bot commands).
type Entity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
}

// CallbackQuery is a press of an inline button.
type CallbackQuery struct {
	ID           string   `json:"id"`
	From         User     `json:"from"`
	Message      *Message `json:"message,omitempty"`
	ChatInstance string   `json:"chat_instance"`
	Data         string   `json:"data,omitempty"`
}

// Update is one incoming update.
type Update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *Message       `json:"message,omitempty"`
	CallbackQuery *CallbackQuery `json:"callback_query,omitempty"`
}

// Sent is a message the bot sent.
type Sent struct {
	ChatID    int64
	MessageID int64
	Text      string // as sent (HTML when ParseMode is HTML)
	Plain     string // the text a user sees
	ParseMode string
	ReplyTo   int64
	Markup    string // reply_markup JSON, "" for none
	// ContentType is the request's media type (multipart/form-data, …).
	ContentType string
}

// Call is one API request the server answered.
type Call struct {
	Method      string
	Params      map[string]string
	ContentType string
	Status      int
}

// Answer is an answerCallbackQuery call.
type Answer struct {
	CallbackID string
	Text       string
}

// Edit is an editMessageReplyMarkup call.
type Edit struct {
	ChatID    int64
	MessageID int64
	Markup    string
}

// Webhook is the webhook the bot registered.
type Webhook struct {
	URL            string
	SecretToken    string
	MaxConnections int
	AllowedUpdates string
}

type failure struct {
	code       int
	retryAfter int
	desc       string
}

// Server is the fake Bot API.
type Server struct {
	// URL is the base URL to give the bot library (no trailing slash).
	URL string
	// Bot is what getMe answers.
	Bot User

	srv *http.Server
	ln  net.Listener

	mu         sync.Mutex
	token      string
	updates    []Update // not yet confirmed
	nextUpdate int64
	served     map[int64]int // update_id → times returned by getUpdates
	wake       chan struct{} // closed and replaced when an update arrives
	nextMsg    map[int64]int64
	messages   map[[2]int64]Message // what the bot sent, by chat and ID
	sent       []Sent
	calls      []Call
	answers    []Answer
	edits      []Edit
	callbacks  map[string]bool
	fail       map[string][]failure
	webhook    *Webhook
	sentSignal chan struct{}
	pollers    int // getUpdates requests being held now
	maxPollers int // the most ever held at once
}

// New starts a fake server that accepts token.
func New(token string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tgtest: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln, token: token, nextUpdate: 100,
		Bot:    User{ID: botID(token), IsBot: true, FirstName: "Bullpen", Username: "bullpen_test_bot"},
		served: map[int64]int{}, wake: make(chan struct{}), nextMsg: map[int64]int64{},
		messages: map[[2]int64]Message{}, callbacks: map[string]bool{}, fail: map[string][]failure{},
		sentSignal: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server, ending held getUpdates requests.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.srv.SetKeepAlivesEnabled(false)
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	return nil
}

func botID(token string) int64 {
	id, _ := strconv.ParseInt(strings.SplitN(token, ":", 2)[0], 10, 64)
	return id
}

// SetToken changes the token the server accepts, as revoking it with
// BotFather does: requests with the old one get 401.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// FailNext makes the next n calls of method fail with the given error
// code; retryAfter > 0 adds parameters.retry_after (use it with 429).
func (s *Server) FailNext(method string, n, code, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	desc := http.StatusText(code)
	switch code {
	case http.StatusTooManyRequests:
		desc = fmt.Sprintf("Too Many Requests: retry after %d", retryAfter)
	case http.StatusBadRequest:
		desc = "Bad Request: chat not found"
	case http.StatusForbidden:
		desc = "Forbidden: bot was blocked by the user"
	}
	for i := 0; i < n; i++ {
		s.fail[method] = append(s.fail[method], failure{code: code, retryAfter: retryAfter, desc: desc})
	}
}

// push queues an update and wakes held getUpdates calls.
func (s *Server) push(u Update) Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextUpdate++
	u.UpdateID = s.nextUpdate
	s.updates = append(s.updates, u)
	close(s.wake)
	s.wake = make(chan struct{})
	return u
}

// newMessageID returns the next message ID of a chat.
func (s *Server) newMessageID(chat int64) int64 {
	s.nextMsg[chat]++
	return s.nextMsg[chat]
}

// SendText queues a text message from a user in a chat, as Telegram
// delivers it to the bot, and returns the update. A leading /command gets
// its bot_command entity.
func (s *Server) SendText(chat Chat, from User, text string) Update {
	return s.Reply(chat, from, text, 0)
}

// Reply is SendText as a reply to message replyTo of the same chat
// (0 for none).
func (s *Server) Reply(chat Chat, from User, text string, replyTo int64) Update {
	s.mu.Lock()
	m := Message{MessageID: s.newMessageID(chat.ID), From: &from, Chat: chat, Date: time.Now().Unix(), Text: text}
	if strings.HasPrefix(text, "/") {
		n := strings.IndexAny(text, " \n")
		if n < 0 {
			n = len(text)
		}
		m.Entities = []Entity{{Type: "bot_command", Offset: 0, Length: utf16Len(text[:n])}}
	}
	if replyTo != 0 {
		if orig, ok := s.messages[[2]int64{chat.ID, replyTo}]; ok {
			o := orig
			m.ReplyToMessage = &o
		} else {
			m.ReplyToMessage = &Message{MessageID: replyTo, Chat: chat, Date: m.Date}
		}
	}
	s.mu.Unlock()
	return s.push(Update{Message: &m})
}

// Press queues a press by from of the inline button with data on the bot's
// message msgID in chat, and returns the update.
func (s *Server) Press(chat Chat, from User, msgID int64, data string) Update {
	s.mu.Lock()
	id := fmt.Sprintf("cbq-%d-%d", from.ID, len(s.callbacks)+1)
	s.callbacks[id] = true
	m, ok := s.messages[[2]int64{chat.ID, msgID}]
	if !ok {
		m = Message{MessageID: msgID, Chat: chat}
	}
	s.mu.Unlock()
	return s.push(Update{CallbackQuery: &CallbackQuery{ID: id, From: from, Message: &m, ChatInstance: "ci", Data: data}})
}

// Sent returns the messages the bot sent, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// WaitSent waits until the bot has sent at least n messages and returns
// them all; it fails after timeout.
func (s *Server) WaitSent(n int, timeout time.Duration) ([]Sent, error) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		got, sig := append([]Sent(nil), s.sent...), s.sentSignal
		s.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-sig:
		case <-deadline:
			return got, fmt.Errorf("tgtest: %d messages sent after %v, want %d", len(got), timeout, n)
		}
	}
}

// Calls returns every API call answered, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Answers returns the answerCallbackQuery calls.
func (s *Server) Answers() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Answer(nil), s.answers...)
}

// Edits returns the editMessageReplyMarkup calls.
func (s *Server) Edits() []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Edit(nil), s.edits...)
}

// Served reports how many times getUpdates returned the update.
func (s *Server) Served(updateID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served[updateID]
}

// Unconfirmed returns how many updates the bot has not yet confirmed.
func (s *Server) Unconfirmed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// MaxPollers reports the most getUpdates requests the server ever held at
// once: more than one means two processes polled the bot together, which
// real Telegram answers with 409 Conflict.
func (s *Server) MaxPollers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxPollers
}

// Webhook returns the registered webhook, nil when none.
func (s *Server) Webhook() *Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webhook == nil {
		return nil
	}
	w := *s.webhook
	return &w
}

// DeliverWebhook posts u to the registered webhook as Telegram does, with
// the secret token header, and returns the HTTP status.
func (s *Server) DeliverWebhook(u Update, secret string) (int, error) {
	s.mu.Lock()
	wh := s.webhook
	s.mu.Unlock()
	if wh == nil {
		return 0, fmt.Errorf("tgtest: no webhook registered")
	}
	body, _ := json.Marshal(u)
	req, err := http.NewRequest(http.MethodPost, wh.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// NewUpdate builds a text-message update without queueing it, for
// webhook tests.
func (s *Server) NewUpdate(chat Chat, from User, text string) Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextUpdate++
	m := Message{MessageID: s.newMessageID(chat.ID), From: &from, Chat: chat, Date: time.Now().Unix(), Text: text}
	return Update{UpdateID: s.nextUpdate, Message: &m}
}

// params reads a request's parameters from the query string and a
// multipart, urlencoded or JSON body. JSON objects and arrays come back
// as their JSON text, as they travel in a form.
func params(r *http.Request) (map[string]string, string, error) {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		out[k] = v[0]
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		return nil, ct, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return out, ct, nil // a method without parameters: Telegram accepts an empty body of any type
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	switch ct {
	case "multipart/form-data":
		if err := r.ParseMultipartForm(8 << 20); err != nil {
			return nil, ct, err
		}
		for k, v := range r.MultipartForm.Value {
			out[k] = v[0]
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return nil, ct, err
		}
		for k, v := range r.PostForm {
			out[k] = v[0]
		}
	case "application/json":
		var m map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			return nil, ct, err
		}
		for k, raw := range m {
			var str string
			if json.Unmarshal(raw, &str) == nil {
				out[k] = str
			} else {
				out[k] = string(raw)
			}
		}
	}
	return out, ct, nil
}

// Requeue puts an update back as if the bot had never confirmed it, as
// Telegram does when a bot stops between handling an update and asking
// for the next ones. A bot that sends its committed offset never sees it
// again.
func (s *Server) Requeue(u Update) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates = append([]Update{u}, s.updates...)
	close(s.wake)
	s.wake = make(chan struct{})
}
