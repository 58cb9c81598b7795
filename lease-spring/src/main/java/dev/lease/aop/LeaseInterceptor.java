package dev.lease.aop;

import java.lang.reflect.Method;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;

import dev.lease.LeaseTemplate;
import dev.lease.LeaseUnavailableException;
import dev.lease.WhenBusy;

/** Runs a {@code @Leased} method inside a leased section of the application's {@link LeaseTemplate}. */
final class LeaseInterceptor implements MethodInterceptor {

    private final LeasedMethodRegistry registry;
    private final ObjectProvider<LeaseTemplate> leases;
    private final LeasedCalls calls;

    LeaseInterceptor(LeasedMethodRegistry registry, ObjectProvider<LeaseTemplate> leases, LeasedCalls calls) {
        this.registry = registry;
        this.leases = leases;
        this.calls = calls;
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
        if (!calls.enter()) {
            throw new LeaseUnavailableException(name, "(none asked)", "the application is shutting down (the lease "
                    + "engine is closing), so " + leased.describe() + " did not run");
        }
        try {
            String fence = registry.evaluateFence(leased, invocation.getArguments(), target);
            return leases.getObject().run(leased.spec(name, fence), lease -> invocation.proceed(),
                    leased.whenBusy() == WhenBusy.SKIP ? leased.skipValue() : null);
        }
        finally {
            calls.exit();
        }
    }
}
