// Package portal is the developer portal's pages: partners sign up, sign
// in and manage their own apps — keys, redirect allowlist, webhook URL and
// secret, test events and the delivery log, and recent orders, each with a
// page of its own — without an operator. Handler serves the pages under
// /portal; every rule behind them is accounts.Service's.
package portal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/boxoffice/boxoffice/accounts"
	"github.com/boxoffice/boxoffice/apperr"
	"github.com/boxoffice/boxoffice/webpage"
	"github.com/go-chi/chi/v5"
)

// CookieName is the session cookie; it holds the session's secret token.
const CookieName = "boxoffice_portal"

// ContentSecurityPolicy is sent with every portal answer: scripts and
// styles only from the portal's own files (no inline script), forms only
// to the portal, and no framing.
var ContentSecurityPolicy = webpage.CSP("script-src 'self'", "style-src 'self'", "img-src 'self' data:", "form-action 'self'")

// Handler serves the portal's pages under /portal.
type Handler struct {
	Service *accounts.Service
	Log     *slog.Logger
}

// Routes returns the portal's router, to be mounted at /portal. Every form
// post is refused when it comes from another site (http.CrossOriginProtection,
// by Sec-Fetch-Site or Origin), and a signed-in form must also carry the
// session's form token.
func (h *Handler) Routes() http.Handler {
	r := chi.NewRouter()
	r.Use(securityHeaders)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(h.crossSite))
	r.Use(cop.Handler)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		h.message(w, r, http.StatusNotFound, "Page not found", "There is no portal page at this address.")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		h.message(w, r, http.StatusMethodNotAllowed, "Not allowed", "This page does not answer that method.")
	})

	r.Get("/assets/{name}", h.serveAsset)
	r.Get("/", h.home)
	r.Get("/signin", h.signInForm)
	r.Post("/signin", h.signIn)
	r.Get("/signup", h.signUpForm)
	r.Post("/signup", h.signUp)
	r.Get("/reset/{token}", h.resetForm)
	r.Post("/reset/{token}", h.reset)
	r.Group(func(r chi.Router) {
		r.Use(h.signedIn)
		r.Post("/signout", h.signOut)
		r.Get("/account", h.account)
		r.Get("/apps", h.apps)
		r.Post("/apps", h.createApp)
		r.Route("/apps/{app}", func(r chi.Router) {
			r.Get("/", h.app)
			r.Get("/orders/{reference}", h.order)
			r.Post("/orders/{reference}/refund", h.refundOrder)
			r.Post("/keys/{env}/rotate", h.rotateKey)
			r.Post("/keys/{env}/revoke", h.revokeKey)
			r.Post("/redirect-domains", h.addRedirectDomain)
			r.Post("/redirect-domains/remove", h.removeRedirectDomain)
			r.Post("/webhook-url", h.setWebhookURL)
			r.Post("/webhook-secret", h.rotateWebhookSecret)
			r.Post("/test-event", h.sendTestEvent)
			r.Post("/webhook-resume", h.resumeWebhooks)
			r.Post("/ticket-emails", h.setTicketEmails)
			r.Post("/events/{event}/redeliver", h.redeliver)
			r.Get("/webhooks", h.webhooks)
			r.Post("/webhooks/{env}/endpoints", h.createEndpoint)
			r.Post("/webhooks/{env}/endpoints/{endpoint}/status", h.setEndpointStatus)
			r.Post("/webhooks/{env}/endpoints/{endpoint}/rotate", h.rotateEndpointSecret)
			r.Post("/webhooks/{env}/endpoints/{endpoint}/delete", h.deleteEndpoint)
			r.Post("/webhooks/{env}/endpoints/{endpoint}/recover", h.recoverEndpoint)
			r.Post("/webhooks/{env}/events/{event}/redeliver", h.redeliverEvent)
		})
	})
	return r
}

// securityHeaders go on every portal answer, pages and assets alike.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// Referrer-Policy among them: reset links carry their token in the
		// path, so no other site may see it.
		webpage.SetHeaders(h, ContentSecurityPolicy)
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		// Pages hold account data and one-time secrets; assets say otherwise.
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func (h *Handler) crossSite(w http.ResponseWriter, r *http.Request) {
	h.message(w, r, http.StatusForbidden, "Refused", "This form was sent from another site, so it was not accepted. Open the portal and try again there.")
}

type sessionKey struct{}

func sessionFrom(r *http.Request) *accounts.Session {
	s, _ := r.Context().Value(sessionKey{}).(*accounts.Session)
	return s
}

// signedIn lets a request through with its session, or sends the browser to
// sign in (clearing a dead cookie). A form post must carry the session's
// form token.
func (h *Handler) signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie(CookieName)
		token := ""
		if c != nil {
			token = c.Value
		}
		sess, err := h.Service.Session(r.Context(), token)
		if err != nil {
			if apperr.CodeOf(err) != apperr.Unauthorized {
				h.internal(w, r, err)
				return
			}
			if c != nil {
				h.clearCookie(w)
			}
			to := "/portal/signin"
			if c != nil && err != accounts.ErrNotSignedIn {
				to += "?expired=1"
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !sess.CheckCSRF(r.PostFormValue("csrf")) {
			h.message(w, r, http.StatusForbidden, "Refused", "This form has expired or did not come from the portal. Reload the page and try again.")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)))
	})
}

// current returns the request's session when its cookie names a live one.
func (h *Handler) current(r *http.Request) *accounts.Session {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return nil
	}
	sess, err := h.Service.Session(r.Context(), c.Value)
	if err != nil {
		return nil
	}
	return sess
}

func (h *Handler) secure() bool { return strings.HasPrefix(h.Service.Config.BaseURL, "https://") }

func (h *Handler) setCookie(w http.ResponseWriter, sess *accounts.Session) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: sess.Token, Path: "/portal", Expires: sess.ExpiresAt,
		HttpOnly: true, Secure: h.secure(), SameSite: http.SameSiteLaxMode,
	})
}

func (h *Handler) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/portal", MaxAge: -1,
		HttpOnly: true, Secure: h.secure(), SameSite: http.SameSiteLaxMode,
	})
}

// home sends a signed-in partner to their apps (or status), anyone else to
// sign in.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	to := "/portal/signin"
	if sess := h.current(r); sess != nil {
		to = landing(sess)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// landing is where a session starts: the apps, or the account's status
// while it may do nothing else.
func landing(sess *accounts.Session) string {
	if accounts.CheckActive(sess.Account) != nil {
		return "/portal/account"
	}
	return "/portal/apps"
}

func (h *Handler) signInForm(w http.ResponseWriter, r *http.Request) {
	p := &page{Title: "Sign in", Nav: "signin", Narrow: true}
	if r.URL.Query().Get("expired") != "" {
		p.Err = apperr.New(apperr.Unauthorized, "Your session has expired; sign in again.")
	}
	if r.URL.Query().Get("reset") != "" {
		p.Flash = "Your new password is set. Sign in with it."
	}
	h.render(w, r, http.StatusOK, "signin", p)
}

func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	sess, err := h.Service.SignIn(r.Context(), r.PostForm.Get("email"), r.PostForm.Get("password"))
	if err != nil {
		h.refuse(w, r, err, &page{Title: "Sign in", Nav: "signin", Narrow: true, Form: r.PostForm}, "signin")
		return
	}
	h.setCookie(w, sess)
	http.Redirect(w, r, landing(sess), http.StatusSeeOther)
}

func (h *Handler) signUpForm(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "signup", &page{Title: "Create an account", Nav: "signup", Narrow: true})
}

func (h *Handler) signUp(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	acc, err := h.Service.SignUp(r.Context(), accounts.SignUpInput{
		Name: r.PostForm.Get("name"), Email: r.PostForm.Get("email"), Password: r.PostForm.Get("password"),
	})
	if err != nil {
		h.refuse(w, r, err, &page{Title: "Create an account", Nav: "signup", Narrow: true, Form: r.PostForm}, "signup")
		return
	}
	h.render(w, r, http.StatusCreated, "signedup", &page{Title: "Account created", Narrow: true, Account: acc})
}

func (h *Handler) resetForm(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	acc, err := h.Service.ResetAccount(r.Context(), token)
	if err != nil {
		h.refuse(w, r, err, &page{Title: "Set a new password", Narrow: true}, "reset")
		return
	}
	h.render(w, r, http.StatusOK, "reset", &page{Title: "Set a new password", Narrow: true, Account: acc, Token: token})
}

func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	err := h.Service.ResetPassword(r.Context(), token, r.PostFormValue("password"))
	if err != nil {
		p := &page{Title: "Set a new password", Narrow: true, Token: token}
		if apperr.CodeOf(err) == apperr.ValidationFailed {
			p.Account, _ = h.Service.ResetAccount(r.Context(), token)
		}
		h.refuse(w, r, err, p, "reset")
		return
	}
	h.clearCookie(w)
	http.Redirect(w, r, "/portal/signin?reset=1", http.StatusSeeOther)
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	if err := h.Service.SignOut(r.Context(), sessionFrom(r)); err != nil {
		h.internal(w, r, err)
		return
	}
	h.clearCookie(w)
	http.Redirect(w, r, "/portal/signin", http.StatusSeeOther)
}

func (h *Handler) account(w http.ResponseWriter, r *http.Request) {
	sess := sessionFrom(r)
	h.render(w, r, http.StatusOK, "account", &page{Title: "Account", Nav: "account", Session: sess, Account: sess.Account})
}

// refuse answers a refused request with page name showing the refusal, or
// with what the refusal calls for: sign in again, the account's status
// page, or the internal-error page.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error, p *page, name string) {
	e := apperr.From(err)
	sess := sessionFrom(r)
	switch {
	case e.Code == apperr.Internal || e.Status() >= 500:
		h.internal(w, r, err)
		return
	case (e.Code == apperr.AccountPendingApproval || e.Code == apperr.AccountDisabled) && sess != nil:
		h.render(w, r, e.Status(), "account", &page{Title: "Account", Nav: "account", Session: sess, Account: sess.Account, Err: e})
		return
	case e.Code == apperr.NotFound && (name == "app" || name == "webhooks"):
		h.message(w, r, http.StatusNotFound, "App not found", sentence(e.Message))
		return
	case e.Code == apperr.NotFound && name == "order":
		h.message(w, r, http.StatusNotFound, "Order not found", sentence(e.Message))
		return
	case e.Code == apperr.RateLimitExceeded:
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		wait := fmt.Sprintf("%d minutes", (e.RetryAfter+59)/60)
		if e.RetryAfter <= 60 {
			wait = "a minute"
		}
		e = apperr.New(e.Code, "Too many attempts. Wait %s and try again.", wait)
	}
	p.Err, p.Session = e, sess
	h.render(w, r, e.Status(), name, p)
}

// message answers with a page of one message.
func (h *Handler) message(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	h.render(w, r, status, "message", &page{Title: title, Message: msg, Narrow: true, Session: sessionFrom(r)})
}

// internal logs an unexpected failure and answers 500 without its details.
func (h *Handler) internal(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	h.Log.ErrorContext(r.Context(), "portal", "path", r.URL.Path, "error", err)
	h.message(w, r, http.StatusInternalServerError, "Something went wrong", "The portal could not do that just now. Try again in a moment.")
}

// back sends the browser to an app's page after a change, with a notice
// picked from done (never text from the request).
func back(w http.ResponseWriter, r *http.Request, appID int64, done string) {
	u := appPath(appID) + "?done=" + url.QueryEscape(done)
	http.Redirect(w, r, u, http.StatusSeeOther)
}
