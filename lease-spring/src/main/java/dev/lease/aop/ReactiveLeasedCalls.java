package dev.lease.aop;

import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.function.SingletonSupplier;

import dev.lease.LeaseSpec;
import dev.lease.WhenBusy;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.Leadership;
import dev.lease.reactive.ReactiveGrantFence;
import dev.lease.reactive.ReactiveLeaseTemplate;

/**
 * {@code Mono}/{@code Flux} methods under {@code @Leased} and {@code @LeaderOnly}: the method is called at once to
 * assemble its publisher, as any Reactor method is, and that publisher is subscribed to under the lease, on
 * subscription. Loaded only when such a method is called, so that Reactor stays optional.
 */
final class ReactiveLeasedCalls {

    private final Supplier<ReactiveLeaseTemplate> template;

    ReactiveLeasedCalls(Supplier<ReactiveLeaseTemplate> template) {
        this.template = template;
    }

    /**
     * Calls through the application's {@link ReactiveLeaseTemplate} bean, else through one over the engine and the
     * application's {@link ReactiveGrantFence} bean, if there is exactly one; looked up at the first call.
     */
    static ReactiveLeasedCalls of(BeanFactory beanFactory, Supplier<LeaseEngine> engine) {
        return new ReactiveLeasedCalls(SingletonSupplier.of(() -> {
            ReactiveLeaseTemplate found = beanFactory == null ? null
                    : beanFactory.getBeanProvider(ReactiveLeaseTemplate.class).getIfUnique();
            if (found != null) {
                return found;
            }
            LeaseEngine leases = engine.get();
            if (leases == null) {
                throw new IllegalStateException("Reactive @Leased and @LeaderOnly methods run on the LeaseEngine, "
                        + "and there is no single LeaseEngine bean (an application's own LeaseTemplate cannot run "
                        + "them): keep the starter's LeaseEngine bean, or declare a ReactiveLeaseTemplate bean");
            }
            return new ReactiveLeaseTemplate(leases, beanFactory == null ? null
                    : beanFactory.getBeanProvider(ReactiveGrantFence.class).getIfUnique());
        }));
    }

    /** Whether fence at grant is done by the reactive template (without the engine's blocking fence). */
    boolean fencesAtGrant() {
        return template.get().fencesAtGrant();
    }

    Object leased(MethodInvocation invocation, LeaseSpec spec, WhenBusy whenBusy, boolean mono) throws Throwable {
        Publisher<?> body = body(invocation);
        Flux<?> run = template.get().run(spec, lease -> body, whenBusy);
        return mono ? run.singleOrEmpty() : run;
    }

    Object asLeader(MethodInvocation invocation, Leadership election, boolean mono) throws Throwable {
        Publisher<?> body = body(invocation);
        Flux<?> run = template.get().asLeader(election, lease -> body);
        return mono ? run.singleOrEmpty() : run;
    }

    private static Publisher<?> body(MethodInvocation invocation) throws Throwable {
        Object assembled = invocation.proceed();
        return assembled == null ? Mono.empty() : (Publisher<?>) assembled;
    }
}
