package dev.lease.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;

import dev.lease.LeaseTemplate;
import dev.lease.LeaseUnavailableException;
import dev.lease.WhenBusy;

/**
 * Runs a {@code @Leased} method inside a leased section of the application's {@link LeaseTemplate}, or, for
 * {@code Mono}/{@code Flux} methods and Kotlin suspend functions, subscribes to its work under the lease. A blocking
 * call on a thread that must not block, and a body that returns asynchronous work its declared type does not show,
 * fail rather than let the work escape the lease or stall an event loop.
 */
final class LeaseInterceptor implements MethodInterceptor {

    private final LeasedMethodRegistry registry;
    private final ObjectProvider<LeaseTemplate> leases;
    private final LeasedCalls calls;
    /** Created at the first Mono/Flux call, so that Reactor stays optional. */
    private final Supplier<ReactiveLeasedCalls> reactive;

    LeaseInterceptor(LeasedMethodRegistry registry, ObjectProvider<LeaseTemplate> leases, LeasedCalls calls,
            Supplier<ReactiveLeasedCalls> reactive) {
        this.registry = registry;
        this.leases = leases;
        this.calls = calls;
        this.reactive = reactive;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : method.getDeclaringClass();
        LeasedMethod leased = registry.find(method, targetClass).orElse(null);
        if (leased == null) {
            return invocation.proceed();
        }
        String name = registry.evaluateName(leased, invocation.getArguments(), target);
        if (leased.reactive()) {
            // Nothing is held while the publisher is assembled; the lease is taken on subscription, so shutdown is
            // left to the engine: closing it ends every section still held with LeaseLostException.
            String fence = registry.evaluateFence(leased, invocation.getArguments(), target);
            return reactive.get().leased(invocation, leased.method(), leased.spec(name, fence), leased.whenBusy());
        }
        NonBlockingThreads.refuseBlocking(leased.culprit(), leased.waitFor());
        if (!calls.enter()) {
            throw new LeaseUnavailableException(name, "(none asked)", "the application is shutting down (the lease "
                    + "engine is closing), so " + leased.describe() + " did not run");
        }
        try {
            String fence = registry.evaluateFence(leased, invocation.getArguments(), target);
            return leases.getObject().run(leased.spec(name, fence), lease -> AsyncResults.refuseEscaping(
                    leased::culprit, leased.method().getReturnType(), invocation.proceed(), leased.async()),
                    leased.whenBusy() == WhenBusy.SKIP ? leased.skipValue() : null);
        }
        finally {
            calls.exit();
        }
    }
}
