package dev.lease.fence.http;

import java.util.Collections;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import dev.lease.FencingToken;
import dev.lease.fence.Fence;
import dev.lease.fence.StaleTokenException;
import dev.lease.spi.LeaseNames;

/**
 * Runs inside the handler's transaction (its advisor goes behind the existing ones), before the handler body: reads
 * the request's {@code Fencing-Token}, checks it names the expected lease, and advances the {@link Fence}. A
 * refusal is thrown as {@link FencingRefusal}; the handler body never runs.
 */
final class FencedRequestInterceptor implements MethodInterceptor {

    private final FencedRequestMethods methods;
    private final ObjectProvider<Fence> fence;

    FencedRequestInterceptor(FencedRequestMethods methods, ObjectProvider<Fence> fence) {
        this.methods = methods;
        this.fence = fence;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target)
                : invocation.getMethod().getDeclaringClass();
        FencedRequestMethods.Parsed fenced = methods.find(invocation.getMethod(), targetClass).orElse(null);
        if (fenced == null) {
            return invocation.proceed();
        }
        HttpServletRequest request = currentRequest(fenced);
        Object[] args = invocation.getArguments();
        String resource = fenced.resource().evaluate("the resource", target, args);
        FencingToken token = token(request, resource);
        if (fenced.lease() != null) {
            String expected = fenced.lease().evaluate("the lease", target, args);
            if (!expected.equals(token.lease())) {
                throw FencingRefusal.tokenRequired(resource, FencingRefusal.Missing.OTHER_LEASE, "The "
                        + FencingTokenHeader.NAME + " header carries a "
                        + "token of lease '" + token.lease() + "', but resource '" + resource + "' is written under "
                        + "lease '" + expected + "': tokens of different leases cannot be compared.");
            }
        }
        try {
            fence.getObject().advance(resource, token);
        }
        catch (StaleTokenException stale) {
            throw FencingRefusal.stale(stale);
        }
        return methods.checkReturned(fenced, invocation.proceed());
    }

    private static FencingToken token(HttpServletRequest request, String resource) {
        List<String> lines = Collections.list(request.getHeaders(FencingTokenHeader.NAME));
        if (lines.isEmpty()) {
            throw FencingRefusal.tokenRequired(resource, FencingRefusal.Missing.HEADER, "The request has no " + FencingTokenHeader.NAME
                    + " header.");
        }
        try {
            FencingToken token = FencingTokenHeader.parse(String.join(", ", lines));
            LeaseNames.validate(token.lease());
            return token;
        }
        catch (IllegalArgumentException malformed) {
            throw FencingRefusal.tokenRequired(resource, FencingRefusal.Missing.MALFORMED, malformed.getMessage());
        }
    }

    private static HttpServletRequest currentRequest(FencedRequestMethods.Parsed fenced) {
        RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
        if (attributes instanceof ServletRequestAttributes servlet) {
            return servlet.getRequest();
        }
        throw new IllegalStateException(fenced.describe() + " was called outside a Spring MVC request, so there is "
                + "no " + FencingTokenHeader.NAME + " header to check; call it through HTTP, or call the code it "
                + "wraps directly with a Fence of your own.");
    }
}
