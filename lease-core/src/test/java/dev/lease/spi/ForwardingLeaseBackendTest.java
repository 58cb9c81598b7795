package dev.lease.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * Every method of the SPI is forwarded, or every wrapper built on {@link ForwardingLeaseBackend} hides it from the
 * engine: the first test fails when a method added to {@link LeaseBackend} is not overridden, the second when an
 * override does not pass the call, its arguments and its answer through.
 */
class ForwardingLeaseBackendTest {

    private record TestGrant(String name, OptionalLong token) implements Grant {
    }

    /** One call the delegate received. */
    private record Call(Method method, List<Object> args) {
    }

    @Test
    void overridesEveryMethodOfTheSpi() {
        List<String> missing = new ArrayList<>();
        for (Method method : spiMethods()) {
            try {
                Method forwarded = ForwardingLeaseBackend.class.getDeclaredMethod(method.getName(),
                        method.getParameterTypes());
                if (Modifier.isAbstract(forwarded.getModifiers())) {
                    missing.add(method.getName() + " (abstract)");
                }
            }
            catch (NoSuchMethodException ex) {
                missing.add(method.getName());
            }
        }
        assertThat(missing).as("LeaseBackend methods ForwardingLeaseBackend does not forward").isEmpty();
    }

    /** Twice, so that an override answering a constant (true, say) instead of the delegate's answer is caught. */
    @Test
    void passesEveryCallItsArgumentsAndItsAnswerThrough() throws Exception {
        for (int round = 0; round < 2; round++) {
            List<Call> received = new ArrayList<>();
            Map<Class<?>, Object> answers = answers(round);
            @SuppressWarnings("unchecked")
            LeaseBackend<Grant> delegate = (LeaseBackend<Grant>) Proxy.newProxyInstance(
                    LeaseBackend.class.getClassLoader(), new Class<?>[] {LeaseBackend.class}, (proxy, method, args) -> {
                        if (method.getDeclaringClass() == Object.class) {
                            return method.getName().equals("equals") ? proxy == args[0]
                                    : method.getName().equals("hashCode") ? System.identityHashCode(proxy) : "delegate";
                        }
                        received.add(new Call(method, args == null ? List.of() : Arrays.asList(args)));
                        return answers.get(method.getReturnType());
                    });
            LeaseBackend<Grant> wrapper = new ForwardingLeaseBackend<>(delegate) {
            };
            for (Method method : spiMethods()) {
                received.clear();
                assertThat(method.getReturnType() == void.class || answers.containsKey(method.getReturnType()))
                        .as("LeaseBackend.%s answers a %s: teach this test to make one", method.getName(),
                                method.getReturnType().getName())
                        .isTrue();
                Object[] args = argumentsFor(method, round);
                Object answer;
                try {
                    answer = method.invoke(wrapper, args);
                }
                catch (InvocationTargetException ex) {
                    throw new AssertionError(method.getName() + " threw through the wrapper", ex.getCause());
                }
                assertThat(received).as("what the delegate received for %s", method.getName())
                        .containsExactly(new Call(method, Arrays.asList(args)));
                if (method.getReturnType().isPrimitive() && method.getReturnType() != void.class) {
                    assertThat(answer).as("the answer of %s", method.getName())
                            .isEqualTo(answers.get(method.getReturnType()));
                }
                else if (method.getReturnType() != void.class) {
                    assertThat(answer).as("the answer of %s", method.getName())
                            .isSameAs(answers.get(method.getReturnType()));
                }
            }
        }
    }

    private static List<Method> spiMethods() {
        return Arrays.stream(LeaseBackend.class.getMethods()).filter(m -> !Modifier.isStatic(m.getModifiers()))
                .toList();
    }

    /** A distinct answer per return type; in round 1 the booleans are the opposite of round 0's. */
    private static Map<Class<?>, Object> answers(int round) {
        TestGrant grant = new TestGrant("answer-" + round, OptionalLong.of(round));
        return Map.of(String.class, "id-" + round,
                BackendTraits.class, BackendTraits.unfenced("round " + round).withMaxTtl(Duration.ofSeconds(round + 1)),
                Optional.class, Optional.of(grant),
                boolean.class, round == 0,
                Set.class, Set.of(grant),
                Map.class, Map.of("round", round));
    }

    /** Fresh arguments for {@code method}, made from its parameter types. */
    private static Object[] argumentsFor(Method method, int round) {
        Class<?>[] types = method.getParameterTypes();
        Object[] args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            TestGrant grant = new TestGrant("argument-" + round + "-" + i, OptionalLong.of(i));
            Class<?> type = types[i];
            if (type == String.class) {
                args[i] = "name-" + round + "-" + i;
            }
            else if (type == Duration.class) {
                args[i] = Duration.ofMillis(100 + round * 10 + i);
            }
            else if (type == GrantRequest.class) {
                args[i] = new GrantRequest("request-" + round, Duration.ofSeconds(30), r -> {
                });
            }
            else if (type == Grant.class) {
                args[i] = grant;
            }
            else if (type == Collection.class) {
                args[i] = List.of(grant);
            }
            else {
                throw new AssertionError("LeaseBackend." + method.getName() + " takes a " + type.getName()
                        + ": teach this test to make one, so that its forwarding is checked too");
            }
        }
        return args;
    }
}
