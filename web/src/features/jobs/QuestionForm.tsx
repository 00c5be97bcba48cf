import { useMutation } from '@apollo/client/react';
import { useState, type FormEvent } from 'react';
import { graphql } from '../../gql';

const AnswerQuestion = graphql(`
  mutation AnswerQuestion($input: AnswerQuestionInput!) {
    answerQuestion(input: $input) {
      __typename
      ... on Question {
        id
        status
        answer
        answeredAt
      }
      ... on ValidationError {
        message
        issues {
          message
        }
      }
      ... on Error {
        message
      }
    }
  }
`);

export interface QuestionData {
  id: string;
  text: string;
  choices: string[];
  status: string;
  answer?: string | null;
}

/** The planner's question, answered inline; the job resumes planning once all are answered. */
export function QuestionForm({ question, onAnswered }: { question: QuestionData; onAnswered: () => void }) {
  const [answer, setAnswer] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [send, { loading }] = useMutation(AnswerQuestion);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const r = (await send({ variables: { input: { questionId: question.id, answer } } })).data?.answerQuestion;
      if (r?.__typename === 'Question') return onAnswered();
      setError(r && 'message' in r ? r.message : 'No answer from the API.');
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <form
      className="panel"
      onSubmit={submit}
      aria-label="Answer the planner"
      style={{ borderColor: 'var(--warn)' }}
      data-testid="question-form"
    >
      <h2>The planner has a question</h2>
      <p style={{ whiteSpace: 'pre-wrap' }}>{question.text}</p>
      {question.choices.length > 0 && (
        <fieldset style={{ border: 0, padding: 0, margin: '0 0 10px' }}>
          <legend className="muted small">
            Choose one, or name one below in your own words (an answer that names none of them is refused)
          </legend>
          {question.choices.map((c) => (
            <label key={c} style={{ fontWeight: 400 }}>
              <input type="radio" name={`q-${question.id}`} value={c} checked={answer === c} onChange={() => setAnswer(c)} /> {c}
            </label>
          ))}
        </fieldset>
      )}
      <label htmlFor={`answer-${question.id}`}>Your answer</label>
      <textarea
        id={`answer-${question.id}`}
        required
        value={answer}
        onChange={(e) => setAnswer(e.target.value)}
        style={{ minHeight: 60 }}
      />
      {error && (
        <p className="error-text" role="alert">
          {error}
        </p>
      )}
      <button className="primary" type="submit" disabled={loading || !answer.trim()}>
        {loading ? 'Sending…' : 'Send answer'}
      </button>
    </form>
  );
}
