package tools

import "strings"

// TemplatesRepo is where the DigitalOcean Gradient ADK templates live.
const TemplatesRepo = "https://github.com/digitalocean/gradient-adk-templates"

// Template is one ADK template: a folder of TemplatesRepo with .gradient/agent.yml, main.py
// (the @entrypoint), requirements.txt (gradient-adk included) and .env.example.
type Template struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Path        string   `json:"path"` // the folder to run it from, inside the repository
	Commands    []string `json:"commands"`
}

// Templates lists the ADK templates (digitalocean/gradient-adk-templates @ 825656a, 2026-03-13).
var Templates = []Template{
	{Name: "StateGraph", Description: "LangGraph StateGraph that chains LLM calls (a joke generator); input {\"topic\"}"},
	{Name: "WebSearch", Description: "LangGraph agent with one web-search tool (DuckDuckGo)"},
	{Name: "FunctionCalling", Path: "FunctionCalling/Agent", Description: "agent that calls a DigitalOcean Serverless Function as a tool (deploy it first: FunctionCalling/Setup/setup.sh)"},
	{Name: "KnowledgeBaseRAG", Description: "LangGraph agent that queries your DigitalOcean Knowledge Base"},
	{Name: "RAG", Description: "multi-agent retrieval-augmented Q&A over local PDFs (LangGraph, LangChain)"},
	{Name: "MCP", Description: "agent using tools on MCP servers (Tavily web search, a calculator)"},
	{Name: "Crew", Description: "CrewAI crew that researches news on a topic and date and writes trivia"},
	{Name: "SocialMediaCrew", Description: "multi-agent crew that researches, writes, reviews and illustrates social posts"},
	{Name: "DataScience", Description: "natural language to SQL, analysis and charts over a DigitalOcean managed database"},
	{Name: "DeepSearch", Description: "multi-step web research with a human-approved plan and a cited report"},
	{Name: "DataEngineering", Description: "builds and troubleshoots Snowflake pipelines with dbt"},
	{Name: "PromptOptimization", Description: "optimizes the system prompt with DSPy, evaluates it, deploys the best version"},
}

func init() {
	for i := range Templates {
		t := &Templates[i]
		if t.Path == "" {
			t.Path = t.Name
		}
		t.Commands = []string{
			"git clone --depth 1 " + TemplatesRepo,
			"cd gradient-adk-templates/" + t.Path,
			"python3 -m venv .venv && .venv/bin/pip install -r requirements.txt",
			"cp .env.example .env   # then fill in the keys it names",
			"mosh herd run --name agent -- .venv/bin/gradient agent run --dev",
		}
	}
}

// LookupTemplate finds a template by name, case-insensitively.
func LookupTemplate(name string) (Template, bool) {
	for _, t := range Templates {
		if strings.EqualFold(t.Name, name) {
			return t, true
		}
	}
	return Template{}, false
}
