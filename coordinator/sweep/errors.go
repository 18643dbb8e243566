package sweep

// The error kinds web maps to HTTP statuses by their methods, without
// importing this package.

// RequestError is a request field a sweep cannot run with.
type RequestError struct{ field, msg string }

// BadRequest names the field at fault and why.
func BadRequest(field, msg string) *RequestError { return &RequestError{field: field, msg: msg} }

func (e *RequestError) Error() string { return e.field + ": " + e.msg }
func (e *RequestError) Field() string { return e.field }

// UnavailableError is a request that may succeed later (more workers).
type UnavailableError struct{ msg string }

func Unavailable(msg string) *UnavailableError { return &UnavailableError{msg: msg} }

func (e *UnavailableError) Error() string     { return e.msg }
func (e *UnavailableError) Unavailable() bool { return true }
