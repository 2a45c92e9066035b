// Package queryproto writes the answers of AWS's query protocol (the XML of STS and IAM) for the stubs that speak
// it: a result document, or an ErrorResponse with its code, as the AWS SDK reads them.
package queryproto

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
)

// Action reads r's form and returns its parameters when its Action is action; otherwise it answers the error, as
// the service would, and returns false.
func Action(w http.ResponseWriter, r *http.Request, xmlns, action string) (url.Values, bool) {
	if err := r.ParseForm(); err != nil {
		WriteError(w, xmlns, http.StatusBadRequest, "MalformedQueryString", err.Error())
		return nil, false
	}
	if a := r.PostForm.Get("Action"); a != action {
		WriteError(w, xmlns, http.StatusBadRequest, "InvalidAction", "the stub serves "+action+" only, not "+a)
		return nil, false
	}
	return r.PostForm, true
}

// WriteResult writes v, an XML document, as a query protocol's answer.
func WriteResult(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(v)
}

// WriteError writes an ErrorResponse of the service whose XML namespace is xmlns, with status, code and msg.
func WriteError(w http.ResponseWriter, xmlns string, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<ErrorResponse xmlns="%s"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>stub</RequestId></ErrorResponse>`, xmlns, code, msg)
}
