package tgtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// apiError is a failed call's answer.
type apiError struct {
	code       int
	desc       string
	retryAfter int
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: http.StatusBadRequest, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

// serve answers /bot<TOKEN>/<method>.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || method == "" {
		reply(w, nil, &apiError{code: http.StatusNotFound, desc: "Not Found"})
		return
	}
	p, ct, err := params(r)
	call := Call{Method: method, Params: p, ContentType: ct}
	var result any
	var aerr *apiError
	s.mu.Lock()
	switch {
	case token != s.token:
		aerr = &apiError{code: http.StatusUnauthorized, desc: "Unauthorized"}
	case err != nil:
		aerr = badRequest("can't parse request: %v", err)
	default:
		if fs := s.fail[method]; len(fs) > 0 {
			s.fail[method] = fs[1:]
			aerr = &apiError{code: fs[0].code, desc: fs[0].desc, retryAfter: fs[0].retryAfter}
		}
	}
	s.mu.Unlock()
	if aerr == nil && method == "getUpdates" {
		result, aerr = s.getUpdates(r, p)
	}
	s.mu.Lock()
	if aerr == nil && method != "getUpdates" {
		// the effect and its call record in one critical section, so a
		// test that saw the effect (WaitSent) also sees the call
		result, aerr = s.method(method, p, ct)
	}
	call.Status = http.StatusOK
	if aerr != nil {
		call.Status = aerr.code
	}
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	reply(w, result, aerr)
}

func reply(w http.ResponseWriter, result any, aerr *apiError) {
	w.Header().Set("Content-Type", "application/json")
	if aerr != nil {
		body := map[string]any{"ok": false, "error_code": aerr.code, "description": aerr.desc}
		if aerr.retryAfter > 0 {
			body["parameters"] = map[string]any{"retry_after": aerr.retryAfter}
		}
		w.WriteHeader(aerr.code)
		json.NewEncoder(w).Encode(body)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

// method answers every method but getUpdates; s.mu is held.
func (s *Server) method(method string, p map[string]string, ct string) (any, *apiError) {
	switch method {
	case "getMe":
		return s.Bot, nil
	case "sendMessage":
		return s.sendMessage(p, ct)
	case "answerCallbackQuery":
		id := p["callback_query_id"]
		if !s.callbacks[id] {
			return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
		}
		delete(s.callbacks, id)
		s.answers = append(s.answers, Answer{CallbackID: id, Text: p["text"]})
		return true, nil
	case "editMessageReplyMarkup":
		chat, err1 := strconv.ParseInt(p["chat_id"], 10, 64)
		msg, err2 := strconv.ParseInt(p["message_id"], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, badRequest("chat_id and message_id are required")
		}
		m, ok := s.messages[[2]int64{chat, msg}]
		if !ok {
			return nil, badRequest("message to edit not found")
		}
		if markup := p["reply_markup"]; markup != "" && !json.Valid([]byte(markup)) {
			return nil, badRequest("can't parse reply keyboard markup JSON object")
		}
		m.ReplyMarkup = json.RawMessage(nonEmpty(p["reply_markup"]))
		s.messages[[2]int64{chat, msg}] = m
		s.edits = append(s.edits, Edit{ChatID: chat, MessageID: msg, Markup: p["reply_markup"]})
		return m, nil
	case "setWebhook":
		if p["url"] == "" {
			s.webhook = nil
			return true, nil
		}
		if sec := p["secret_token"]; len(sec) > 256 || strings.Trim(sec, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			return nil, badRequest("secret token contains unallowed characters")
		}
		maxConn, _ := strconv.Atoi(p["max_connections"])
		s.webhook = &Webhook{URL: p["url"], SecretToken: p["secret_token"], MaxConnections: maxConn, AllowedUpdates: p["allowed_updates"]}
		return true, nil
	case "deleteWebhook":
		s.webhook = nil
		return true, nil
	case "getWebhookInfo":
		info := map[string]any{"url": "", "pending_update_count": len(s.updates)}
		if s.webhook != nil {
			info["url"] = s.webhook.URL
		}
		return info, nil
	}
	return nil, &apiError{code: http.StatusNotFound, desc: "Not Found: method not found"}
}

func nonEmpty(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// sendMessage checks and records a message; s.mu is held.
func (s *Server) sendMessage(p map[string]string, ct string) (any, *apiError) {
	chat, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil {
		return nil, badRequest("chat not found")
	}
	text := p["text"]
	plain := text
	if strings.EqualFold(p["parse_mode"], "HTML") {
		if plain, err = ParseHTML(text); err != nil {
			return nil, badRequest("can't parse entities: %v", err)
		}
	} else if p["parse_mode"] != "" {
		return nil, badRequest("unsupported parse_mode %q", p["parse_mode"])
	}
	switch n := utf16Len(strings.TrimSpace(plain)); {
	case n == 0:
		return nil, badRequest("message text is empty")
	case n > 4096:
		return nil, badRequest("message is too long")
	}
	var replyTo int64
	if rp := p["reply_parameters"]; rp != "" {
		var v struct {
			MessageID int64 `json:"message_id"`
		}
		if json.Unmarshal([]byte(rp), &v) != nil {
			return nil, badRequest("can't parse reply parameters JSON object")
		}
		replyTo = v.MessageID
	}
	markup := p["reply_markup"]
	if markup != "" && !json.Valid([]byte(markup)) {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	bot := s.Bot
	m := Message{MessageID: s.newMessageID(chat), From: &bot, Chat: Chat{ID: chat, Type: chatType(chat)},
		Date: time.Now().Unix(), Text: plain}
	if markup != "" {
		m.ReplyMarkup = json.RawMessage(markup)
	}
	if replyTo != 0 {
		if orig, ok := s.messages[[2]int64{chat, replyTo}]; ok {
			o := orig
			o.ReplyToMessage = nil
			m.ReplyToMessage = &o
		}
	}
	s.messages[[2]int64{chat, m.MessageID}] = m
	s.sent = append(s.sent, Sent{ChatID: chat, MessageID: m.MessageID, Text: text, Plain: plain, ParseMode: p["parse_mode"],
		ReplyTo: replyTo, Markup: markup, ContentType: ct})
	close(s.sentSignal)
	s.sentSignal = make(chan struct{})
	return m, nil
}

func chatType(id int64) string {
	if id < 0 {
		return "group"
	}
	return "private"
}

// getUpdates confirms the updates below offset, then holds the request
// until an update at or after offset exists, the timeout passes, or the
// client goes away.
func (s *Server) getUpdates(r *http.Request, p map[string]string) (any, *apiError) {
	offset, _ := strconv.ParseInt(p["offset"], 10, 64)
	timeout, _ := strconv.Atoi(p["timeout"])
	limit, _ := strconv.Atoi(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	deadline := time.NewTimer(time.Duration(timeout) * time.Second)
	defer deadline.Stop()
	s.mu.Lock()
	s.pollers++
	s.maxPollers = max(s.maxPollers, s.pollers)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.pollers--
		s.mu.Unlock()
	}()
	for {
		s.mu.Lock()
		if s.webhook != nil {
			s.mu.Unlock()
			return nil, &apiError{code: http.StatusConflict, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
		}
		kept := s.updates[:0]
		for _, u := range s.updates {
			if offset == 0 || u.UpdateID >= offset {
				kept = append(kept, u)
			}
		}
		s.updates = kept
		if len(kept) > 0 {
			out := append([]Update(nil), kept[:min(limit, len(kept))]...)
			for _, u := range out {
				s.served[u.UpdateID]++
			}
			s.mu.Unlock()
			return out, nil
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-deadline.C:
			return []Update{}, nil
		case <-r.Context().Done():
			return []Update{}, nil
		}
	}
}
