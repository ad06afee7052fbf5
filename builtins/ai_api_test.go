package builtins

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mosh-dev/mosh/conformance/engines/fakeapi"
	"github.com/mosh-dev/mosh/exitcode"
)

const aiTestKey = "sk-test-secret-0123456789"

func fakeModelAPI(t *testing.T) (*fakeapi.Server, string) {
	t.Helper()
	fake := fakeapi.New(fakeapi.Options{AnswerSideRequests: true, Model: "fake-model"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL
}

// The model-API path needs no engine: PATH holds none here.
func TestAIAnthropicAPIAgainstTheFake(t *testing.T) {
	fake, url := fakeModelAPI(t)
	env := aiEnv(t, t.TempDir(), "MOSH_AI_PROVIDER=anthropic", "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY="+aiTestKey, "MOSH_AI_MODEL=claude-fake")
	r := run(t, `
console.log(await ai("say fake-echo q7"))
console.log(await ai("say fake-plain", {model: "other-model"}))
`, Config{Env: env})
	expectOut(t, r, fakeapi.EchoPrefix+"q7\n"+fakeapi.PlainText+"\n")
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].API != "anthropic" || reqs[0].Model != "claude-fake" || reqs[1].Model != "other-model" || reqs[0].Stream {
		t.Fatalf("requests: %+v", reqs)
	}
}

func TestAIOpenAIAPIAgainstTheFake(t *testing.T) {
	fake, url := fakeModelAPI(t)
	env := aiEnv(t, t.TempDir(), "MOSH_AI_PROVIDER=openai", "OPENAI_BASE_URL="+url+"/v1", "OPENAI_API_KEY="+aiTestKey)
	r := run(t, `console.log(await ai("say fake-echo q9", {model: "gpt-x"}))`, Config{Env: env})
	expectOut(t, r, fakeapi.EchoPrefix+"q9\n")
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].API != "chat" || reqs[0].Model != "gpt-x" || reqs[0].Status != http.StatusOK {
		t.Fatalf("requests: %+v", reqs)
	}
}

// {engine: "@api"} takes the API path even when engines are installed; a named engine takes
// the engine even when MOSH_AI_PROVIDER is set.
func TestAIAPIEngineChoice(t *testing.T) {
	_, url := fakeModelAPI(t)
	bin := t.TempDir()
	fakeAIEngine(t, bin, "claude", "claude")
	env := aiEnv(t, bin, "MOSH_AI_PROVIDER=anthropic", "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY="+aiTestKey, "MOSH_AI_MODEL=m")
	r := run(t, `
console.log(await ai("a fake-echo api"))
console.log(await ai("b fake-echo engine", {engine: "claude"}))
`, Config{Env: env})
	expectOut(t, r, fakeapi.EchoPrefix+"api\nclaude answers: b fake-echo engine\n")
	delete(env, "MOSH_AI_PROVIDER")
	r = run(t, `try { await ai("x", {engine: "@api"}) } catch (e) { console.log(e.message) }`, Config{Env: env})
	expectOut(t, r, `ai: {engine: "@api"} needs MOSH_AI_PROVIDER=anthropic or openai`+"\n")
}

func TestAIAPIErrorsNameTheFix(t *testing.T) {
	status := map[string]int{"/401/v1/messages": 401, "/429/v1/messages": 429, "/500/v1/messages": 503, "/404/v1/messages": 404}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := status[r.URL.Path]
		if code == 429 {
			w.Header().Set("Retry-After", "7")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"x","message":"server says ` + http.StatusText(code) + `"}}`))
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	_, fakeURL := fakeModelAPI(t)

	for _, tc := range []struct {
		base string
		want []string
		code exitcode.Code
	}{
		{srv.URL + "/401", []string{"answered 401 Unauthorized: server says Unauthorized", "the key was refused: check ANTHROPIC_API_KEY"}, exitcode.Usage},
		{srv.URL + "/429", []string{"answered 429 Too Many Requests", "(Retry-After: 7)", "rate limited", "MOSH_AI_CONCURRENCY"}, exitcode.Infra},
		{srv.URL + "/500", []string{"answered 503 Service Unavailable", "the provider failed", "check ANTHROPIC_BASE_URL"}, exitcode.Infra},
		{srv.URL + "/404", []string{"answered 404 Not Found", "check ANTHROPIC_BASE_URL", "MOSH_AI_MODEL"}, exitcode.Usage},
		{closedURL, []string{"cannot be reached", "check ANTHROPIC_BASE_URL"}, exitcode.Infra},
		// The fake's scripted HTTP 400.
		{fakeURL, []string{"answered 400 Bad Request: " + fakeapi.ErrorMessage, "check the model"}, exitcode.Usage},
	} {
		env := aiEnv(t, t.TempDir(), "MOSH_AI_PROVIDER=anthropic", "ANTHROPIC_BASE_URL="+tc.base, "ANTHROPIC_API_KEY="+aiTestKey, "MOSH_AI_MODEL=m")
		r := run(t, `await ai("x fake-apierror")`, Config{Env: env})
		if r.err == nil {
			t.Fatalf("%s: resolved", tc.base)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.base, r.err, w)
			}
		}
		if strings.Contains(r.err.Error(), aiTestKey) {
			t.Errorf("the key leaked into the error: %v", r.err)
		}
		if got := exitcode.Of(r.err); got != tc.code {
			t.Errorf("%s: exit code %d, want %d", tc.base, got, tc.code)
		}
	}
}

func TestAIAPIConfigurationErrors(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"MOSH_AI_PROVIDER=anthropic", "MOSH_AI_MODEL=m"}, "MOSH_AI_PROVIDER=anthropic needs a key: set ANTHROPIC_API_KEY"},
		{[]string{"MOSH_AI_PROVIDER=openai", "MOSH_AI_MODEL=m"}, "MOSH_AI_PROVIDER=openai needs a key: set OPENAI_API_KEY"},
		{[]string{"MOSH_AI_PROVIDER=openai", "OPENAI_API_KEY=k"}, "needs a model: set MOSH_AI_MODEL or pass {model}"},
		{[]string{"MOSH_AI_PROVIDER=gemini", "MOSH_AI_MODEL=m"}, "MOSH_AI_PROVIDER=gemini is not a provider: use anthropic or openai"},
	} {
		r := run(t, `try { await ai("x") } catch (e) { console.log(e.message) }`, Config{Env: aiEnv(t, t.TempDir(), tc.env...)})
		if r.err != nil || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%v: %q %v", tc.env, r.stdout, r.err)
		}
	}
}

func TestAIAPIDryRunRedactsTheKey(t *testing.T) {
	fake, url := fakeModelAPI(t)
	env := aiEnv(t, t.TempDir(), "MOSH_AI_PROVIDER=openai", "OPENAI_BASE_URL="+url+"/v1", "OPENAI_API_KEY="+aiTestKey, "MOSH_AI_MODEL=gpt-x")
	r := run(t, `console.log(JSON.stringify(await ai("hello")))`, Config{Env: env, DryRun: true})
	expectOut(t, r, `""`+"\n")
	want := `  ▶ ai("hello") → would POST ` + url + `/v1/chat/completions (model gpt-x, OPENAI_API_KEY as Authorization: Bearer [redacted]) {"messages":[{"content":"hello","role":"user"}],"model":"gpt-x"}` + "\n"
	if r.stderr != want {
		t.Fatalf("narration\n%q\nwant\n%q", r.stderr, want)
	}
	if len(fake.Requests()) != 0 {
		t.Fatal("a dry run called the API")
	}
}

// A model API that does not answer: the timeout rejects (exit 2 if uncaught) and the request is
// abandoned; Ctrl-C ends it too.
func TestAIAPITimeoutAndInterrupt(t *testing.T) {
	arrived := make(chan struct{}, 4)
	gone := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
		gone <- struct{}{}
	}))
	defer srv.Close()
	env := aiEnv(t, t.TempDir(), "MOSH_AI_PROVIDER=openai", "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY="+aiTestKey, "MOSH_AI_MODEL=m")
	r := run(t, `await ai("x", {timeout: "300ms"})`, Config{Env: env})
	if exitcode.Of(r.err) != exitcode.Timeout || !strings.Contains(r.err.Error(), "ai: openai API did not answer within 300ms") {
		t.Fatalf("exit %d: %v", exitcode.Of(r.err), r.err)
	}
	<-gone

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- runCtx(t, ctx, `await ai("x")`, Config{Env: env}, 0) }()
	<-arrived
	<-arrived
	cancel()
	r = <-done
	if exitcode.Of(r.err) != exitcode.Interrupted {
		t.Fatalf("exit %d: %v", exitcode.Of(r.err), r.err)
	}
	<-gone
}
