"""A content security policy on every response: pages load scripts, styles, images and data from this site only, so
nothing (fonts, Swagger UI, analytics) is fetched from another host and an annotator's page cannot leak to one.
Django 5.2's SecurityMiddleware sets no CSP header; this is the whole of it."""

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        # The dashboard and Swagger UI carry small inline scripts and styles; still this origin only.
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response
