package dev.lease.fence.http;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers a {@link FencingRefusal} with its status and problem body, ahead of the application's own exception
 * handlers (an {@code @ExceptionHandler(RuntimeException.class)} must not turn a refused token into a 500 or a 200).
 * Each refusal is logged at DEBUG and counted: stale ones by the fence that refused them ({@code lease.fence.rejected}),
 * 428s by {@code refusals} ({@code lease.fence.token-required}).
 */
final class FencingRefusalResolver implements HandlerExceptionResolver, Ordered {

    private static final Log log = LogFactory.getLog(FencedRequest.class);

    /** Told of each 428; the 409s are the fence's to count, since it alone knows its table. */
    @FunctionalInterface
    interface TokenRequiredCounter {

        TokenRequiredCounter NONE = missing -> {
        };

        void count(FencingRefusal.Missing missing);
    }

    private final TokenRequiredCounter refusals;

    FencingRefusalResolver(TokenRequiredCounter refusals) {
        this.refusals = refusals;
    }

    @Override
    public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
            Exception ex) {
        if (!(ex instanceof FencingRefusal refusal)) {
            return null;
        }
        if (log.isDebugEnabled()) {
            log.debug("Refused " + request.getMethod() + " " + request.getRequestURI() + " with " + refusal.status()
                    + ": " + refusal.getMessage());
        }
        if (refusal.missing() != null) {
            try {
                refusals.count(refusal.missing());
            }
            catch (RuntimeException ex2) {
                log.debug("Could not count the refusal of " + request.getRequestURI() + ": " + ex2);
            }
        }
        try {
            byte[] body = refusal.problem(request.getRequestURI());
            response.resetBuffer();
            response.setStatus(refusal.status());
            response.setContentType(FencingProblems.PROBLEM_JSON);
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
            response.flushBuffer();
        }
        catch (IOException | IllegalStateException ex2) {
            log.debug("Could not write the refusal of " + request.getRequestURI() + ": " + ex2);
        }
        return new ModelAndView();
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
