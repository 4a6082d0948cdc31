package status_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/baton-go/baton/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// localRequest is httptest.NewRequest for a page opened on localhost
// (httptest's default Host, example.com, is not one the page answers for).
func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "localhost"
	return r
}
