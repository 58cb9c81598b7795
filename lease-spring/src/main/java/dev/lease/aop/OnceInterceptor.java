package dev.lease.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.support.AopUtils;

import dev.lease.Lease;
import dev.lease.LeaseContext;
import dev.lease.spi.LeaseNames;
import dev.lease.spi.OnceStore;

/**
 * Runs a {@code @Once} method through the {@link OnceStore}: its key recorded in the body's transaction, or the body
 * skipped when the key was committed before. A wait for another transaction recording the same key lasts at most
 * the remaining validity of the thread's innermost lease (the work is worth nothing after it), else the configured
 * wait.
 */
final class OnceInterceptor implements MethodInterceptor {

    private static final Log log = LogFactory.getLog(OnceInterceptor.class);

    /** The shortest wait: a lease about to expire still gets its insert a chance to run. */
    private static final Duration SHORTEST_WAIT = Duration.ofMillis(1);

    private final OnceMethods methods;
    private final Supplier<OnceStore> store;
    private final Supplier<List<OnceListener>> listeners;
    private final Duration wait;

    OnceInterceptor(OnceMethods methods, Supplier<OnceStore> store, Supplier<List<OnceListener>> listeners,
            Duration wait) {
        this.methods = methods;
        this.store = store;
        this.listeners = listeners;
        this.wait = wait;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        Class<?> targetClass = target != null ? AopUtils.getTargetClass(target) : method.getDeclaringClass();
        OnceMethod once = methods.find(method, targetClass).orElse(null);
        if (once == null) {
            return invocation.proceed();
        }
        String key = methods.evaluateKey(once, invocation.getArguments(), target);
        Object[] result = new Object[1];
        boolean ran = store.get().runOnce(key, LeaseContext.findToken(), waitBound(),
                () -> result[0] = invocation.proceed());
        if (log.isDebugEnabled()) {
            log.debug("@Once key '" + LeaseNames.printable(key) + "' of " + LeasedMethod.describe(once.method()) + ": "
                    + (ran ? "ran" : "skipped, its key was committed before"));
        }
        for (OnceListener listener : listeners.get()) {
            try {
                listener.completed(once.key().declared(), key, ran);
            }
            catch (RuntimeException ex) {
                log.warn("A OnceListener failed on key '" + LeaseNames.printable(key) + "'", ex);
            }
        }
        return ran ? result[0] : once.skipValue().get();
    }

    private Duration waitBound() {
        Optional<Lease> lease = innermostLease();
        if (lease.isEmpty()) {
            return wait;
        }
        Duration remaining = lease.get().remaining();
        return remaining.compareTo(SHORTEST_WAIT) < 0 ? SHORTEST_WAIT : remaining;
    }

    private static Optional<Lease> innermostLease() {
        try {
            return Optional.of(LeaseContext.current());
        }
        catch (IllegalStateException ex) {
            return Optional.empty(); // no leased section on this thread
        }
    }
}
