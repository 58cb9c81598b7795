package dev.lease.aop;

import java.lang.reflect.Method;
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
 * {@code Mono}/{@code Flux} methods and Kotlin suspend functions under {@code @Leased} and {@code @LeaderOnly}: the
 * method is called at once to assemble its publisher, as any Reactor method is (a suspend function's call is a Mono
 * that Spring's proxy awaits, see {@link SuspendFunctions}), and that publisher is subscribed to under the lease, on
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

    /** @param method the annotated method, whose declared type tells a Mono from a Flux */
    Object leased(MethodInvocation invocation, Method method, LeaseSpec spec, WhenBusy whenBusy) throws Throwable {
        Publisher<?> body = body(invocation);
        return shaped(method, body, template.get().run(spec, lease -> body, whenBusy));
    }

    Object asLeader(MethodInvocation invocation, Method method, Leadership election) throws Throwable {
        Publisher<?> body = body(invocation);
        return shaped(method, body, template.get().asLeader(election, lease -> body));
    }

    /**
     * The run as the proxy's caller expects it: as declared, or for a suspend function as Spring handed its call (a
     * Mono, which the proxy awaits; a Flux for a function returning a Flow, which the proxy collects as one).
     */
    private static Object shaped(Method method, Publisher<?> body, Flux<?> run) {
        return ReactiveTypes.isFlux(method) || body instanceof Flux ? run : run.singleOrEmpty();
    }

    /** The method's publisher; for a suspend function, the Mono (or Flux) Spring's proxy calls it through. */
    private static Publisher<?> body(MethodInvocation invocation) throws Throwable {
        Object assembled = invocation.proceed();
        return assembled == null ? Mono.empty() : (Publisher<?>) assembled;
    }
}
