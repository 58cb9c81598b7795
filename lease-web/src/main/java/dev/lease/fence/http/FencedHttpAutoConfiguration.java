package dev.lease.fence.http;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

import dev.lease.fence.Fence;

/**
 * Fencing calls between services, for whichever web stacks the application has: the {@code Fencing-Token} header on
 * every Boot-built {@code RestClient}, {@code RestTemplate} and {@code WebClient} (their customizers; opt a client
 * out with {@link FencedHttpClients}), and {@link FencedRequest} on Spring MVC handlers, checked against the
 * application's {@link Fence} bean (in a WebFlux application a {@code @FencedRequest} fails the startup). Everything
 * here needs Jackson, for the problem bodies of refusals: Boot's web starters bring it; without it the clients send
 * no token (fenced services answer 428) and {@code @FencedRequest} fails the startup.
 */
// After the registries, as LeaseMetricsAutoConfiguration: @ConditionalOnBean(MeterRegistry) must see the one Boot makes.
@AutoConfiguration(afterName = {"dev.lease.autoconfigure.JdbcFenceAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
public class FencedHttpAutoConfiguration {

    /** Instantiated by Spring Boot when the auto-configuration applies; applications do not create it. */
    public FencedHttpAutoConfiguration() {
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(value = {RestClient.class, RestClientCustomizer.class}, name = JSON)
    static class RestClientFencing {

        @Bean
        @ConditionalOnMissingBean(name = "leaseFencingRestClientCustomizer")
        RestClientCustomizer leaseFencingRestClientCustomizer() {
            return builder -> builder.requestInterceptor(new FencingTokenRequestInterceptor());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(value = {RestTemplate.class, RestTemplateCustomizer.class}, name = JSON)
    static class RestTemplateFencing {

        @Bean
        @ConditionalOnMissingBean(name = "leaseFencingRestTemplateCustomizer")
        RestTemplateCustomizer leaseFencingRestTemplateCustomizer() {
            return template -> template.getInterceptors().add(new FencingTokenRequestInterceptor());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(value = {WebClient.class, WebClientCustomizer.class}, name = JSON)
    static class WebClientFencing {

        @Bean
        @ConditionalOnMissingBean(name = "leaseFencingWebClientCustomizer")
        WebClientCustomizer leaseFencingWebClientCustomizer() {
            return builder -> builder.defaultRequest(FencingTokenExchangeFilter.capture())
                    .filter(new FencingTokenExchangeFilter());
        }
    }

    /** WebFlux: {@code @FencedRequest} fails the startup (see {@link UnenforcedFencedRequests}), never ignored. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    static class ReactiveFencing {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static UnenforcedFencedRequests leaseUnenforcedFencedRequests() {
            return new UnenforcedFencedRequests(UnenforcedFencedRequests.WEBFLUX, UnenforcedFencedRequests.WEBFLUX_FIX);
        }
    }

    /** A servlet application where {@link MvcFencing} cannot apply: {@code @FencedRequest} fails the startup. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @Conditional(MvcFencingUnavailable.class)
    static class ServletWithoutMvcFencing {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static UnenforcedFencedRequests leaseUnenforcedFencedRequests() {
            return new UnenforcedFencedRequests(UnenforcedFencedRequests.NO_MVC, UnenforcedFencedRequests.NO_MVC_FIX);
        }
    }

    /** Matches when {@link MvcFencing}'s classes are not all there. */
    static class MvcFencingUnavailable extends NoneNestedConditions {

        MvcFencingUnavailable() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnClass(name = {MVC, JSON})
        static class MvcAndJackson {
        }
    }

    private static final String MVC = "org.springframework.web.servlet.DispatcherServlet";
    private static final String JSON = "tools.jackson.databind.json.JsonMapper";

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = {MVC, JSON})
    static class MvcFencing {

        /** Static: a post-processor, created before ordinary beans; the fence is looked up when first needed. */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static FencedRequestPostProcessor leaseFencedRequestPostProcessor(ObjectProvider<Fence> fence) {
            return new FencedRequestPostProcessor(fence);
        }

        @Bean
        FencingRefusalResolver leaseFencingRefusalResolver(
                ObjectProvider<FencingRefusalResolver.TokenRequiredCounter> refusals) {
            return new FencingRefusalResolver(refusals.getIfAvailable(() -> FencingRefusalResolver.TokenRequiredCounter.NONE));
        }

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(MeterRegistry.class)
        static class TokenRequiredMetering {

            @Bean
            @ConditionalOnBean(MeterRegistry.class)
            FencingRefusalResolver.TokenRequiredCounter leaseFencingTokenRequiredMetrics(MeterRegistry meters) {
                return new TokenRequiredMetrics(meters);
            }
        }
    }
}
