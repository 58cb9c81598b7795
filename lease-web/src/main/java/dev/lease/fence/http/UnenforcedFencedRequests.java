package dev.lease.fence.http;

import java.lang.reflect.Method;
import java.util.Set;
import java.util.TreeSet;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ReflectionUtils;

import dev.lease.LeaseConfigurationException;
import dev.lease.aop.MethodNameTemplate;

/**
 * Where {@link FencedRequest} cannot be enforced, fails the startup naming every method that carries it, so that a
 * safety annotation is never silently inert: in a reactive (WebFlux) application (the check is built on Spring MVC:
 * the servlet request, the handler's blocking transaction), and in a servlet application without Spring MVC or
 * without Jackson (the problem bodies).
 */
final class UnenforcedFencedRequests implements BeanPostProcessor, SmartInitializingSingleton {

    static final String WEBFLUX = "this is a reactive (WebFlux) application, and @FencedRequest is enforced on Spring "
            + "MVC handlers only";
    static final String WEBFLUX_FIX = "serve the fenced endpoints with Spring MVC (spring-boot-starter-webmvc), or "
            + "check the Fencing-Token header yourself (FencingTokenHeader.parse) in the handler and advance a Fence "
            + "(or an R2DBC fence) in its transaction.";
    static final String NO_MVC = "@FencedRequest is enforced by Spring MVC's DispatcherServlet with Jackson (its "
            + "problem bodies), and this servlet application lacks one of them";
    static final String NO_MVC_FIX = "add spring-boot-starter-webmvc (it brings Jackson), or tools.jackson.core:"
            + "jackson-databind if Spring MVC is there.";

    private final Set<String> fenced = new TreeSet<>();
    private final String why;
    private final String fix;

    UnenforcedFencedRequests(String why, String fix) {
        this.why = why;
        this.fix = fix;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (AnnotationUtils.isCandidateClass(type, FencedRequest.class)) {
            ReflectionUtils.doWithMethods(type, this::inspect, m -> !m.isBridge() && !m.isSynthetic());
        }
        return bean;
    }

    private void inspect(Method method) {
        if (AnnotatedElementUtils.hasAnnotation(method, FencedRequest.class)) {
            fenced.add("@FencedRequest on " + MethodNameTemplate.describe(method));
        }
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (!fenced.isEmpty()) {
            throw new LeaseConfigurationException(String.join(", ", fenced) + " would never be checked: " + why
                    + ", so every request would run unfenced.", fix);
        }
    }
}
